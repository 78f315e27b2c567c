//! Research: beyond the library's own records (checking a manuscript against it).

pub mod check_manuscript;
