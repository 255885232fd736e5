"""What a person reads of a run: the deploy menu, the run's story, a candidate's review, the report
files (JSON, Markdown, JUnit XML, HTML with its charts) and publishing a review branch."""
