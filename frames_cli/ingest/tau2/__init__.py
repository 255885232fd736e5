"""tau2-bench tasks → cases: the converter, the customer's brief, tau2's files, what differs between
domains, an airline case's flights, and whether a case can be passed from its input."""
