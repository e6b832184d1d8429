// Placeholder until the serializers land.
