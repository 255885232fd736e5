"""Files people write (CSV, TSV, JSON Lines, JSON, YAML) read into located records with a field
mapping, and the account of what became of every row."""
