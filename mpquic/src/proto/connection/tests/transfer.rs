//! Stream transfer tests.
