// Placeholder until RequestOperation lands.
