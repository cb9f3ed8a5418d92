"""Running episodes, results files, tables and plots."""
