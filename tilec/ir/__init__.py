"""tilec's one place for what xDSL lacks or does slowly: the context, fast op creation,
verification, walks and garbage-collector pauses. Each module says what gap it fills and how it was measured."""
