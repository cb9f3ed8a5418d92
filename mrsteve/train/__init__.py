"""Training the learned parts (torch, the ``train`` extra): the pixel encoder
(:mod:`mrsteve.train.encoder`)."""
