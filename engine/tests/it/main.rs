//! The engine's integration tests: every area reads its cases from `engine/tests/data/` and
//! reports every failing case at once.

mod bypass;
mod cases;
mod compound;
mod envelope;
mod floors_hold;
mod frozen;
mod grants;
mod knowledge;
mod links;
mod places;
mod properties;
mod real_data;
mod rules;
mod signatures;
mod specstory;
mod support;
