//! End-to-end tests of the leastgrant binaries live in `e2e/`; this library is empty on purpose.
