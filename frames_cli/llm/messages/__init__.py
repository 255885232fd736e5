"""What crosses the model layer: requests and replies, prompt templates (prompts/*.txt) and the
conventions the simulator also reads, every role's answer schema, JSON answers checked."""
