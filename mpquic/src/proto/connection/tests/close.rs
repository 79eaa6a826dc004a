//! Close and idle tests.
