"""Commands on a run's candidates: the front, a review, the HTML report, promote and publish."""
