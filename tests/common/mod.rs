//! Fixtures shared by the workspace tests.
pub(crate) mod test_cli;
