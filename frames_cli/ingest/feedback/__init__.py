"""`frames ingest` of operational feedback: review logs, agent traces (Claude Code sessions among them),
generic case tables and policy amendments, and the pipeline that stores what they make."""
