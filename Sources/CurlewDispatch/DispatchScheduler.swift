// Placeholder until the Dispatch backend lands.
