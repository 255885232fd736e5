"""What every converter makes and keeps: the Converter protocol, case identity and storing with
duplicates folded, priors (advice attached to skills), and the cold-start case generator."""
