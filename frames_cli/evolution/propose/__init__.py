"""A child's skills written: failing cases diagnosed (prompts, retrieval, lessons), the vote over
the proposals (consensus, rule comparison), the cost-directed child, and guarded rewriting with its
guards (case values, rule form, the policy's sentences)."""
