"""``python -m mrsteve ...``: the ``mrsteve`` command line."""

from mrsteve.cli import main

if __name__ == "__main__":
    main()
