"""The steps of one round, one module each, in the method's order: parents → diagnose → vote →
rewrite → evaluate → gate → commit → attribute (evolution/run/loop.py calls them in that order and
keeps what each returns in the round's record). Each takes what it needs and returns a frozen value;
git commits, refs, notes and the run state are written only by `commit` and `attribute`."""
