// Placeholder until the RunLoop backend lands.
