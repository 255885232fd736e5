"""Files frames writes and reads safely: atomic writes, no symlink leading outside the workspace."""
