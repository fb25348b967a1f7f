//! hetsim-simulator: the discrete-event engine (issue 3).
