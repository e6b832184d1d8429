// Placeholder until the umbrella lands.
