"""The simulation engine: plans run on the node as a real buyer would."""
