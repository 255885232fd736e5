"""Git storage: candidates as commits built from trees, refs, notes and review branches."""
