//! Number formats.
