//! Report integration tests: replay output written here (small Parquet tables and a
//! `summary.json` in the shape `docs/formats.md` gives), then the report read back as a person
//! and a browser would.

mod browser;
mod fixture;
mod pages;
mod plots;
