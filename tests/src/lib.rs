//! End-to-end tests live in `tests/tests/`; they drive the `hetsim` binary.
