"""One round's child and what it works with: the run context, parent selection, the candidates'
pipeline evaluate → gate → commit → attribute, candidate commits, attribution, stop requests."""
