//! Unit tests of the translator: the encoders against the gfx942 decoder,
//! each rewrite pattern, and fail-closed errors.
