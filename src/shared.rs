//! What more than one command uses, so that no command file imports from another's: the
//! agents' hook configurations (`install` writes them, `doctor` checks them), the clock and the
//! times a person writes, JSON with comments as Gemini CLI reads it, the JSON value that keeps
//! a file's key order, standard output that ends quietly when its reader goes away, and the
//! settings table `simulate`, `run` and `merge` print. A command's own logic stays in its file;
//! where the project, home and state directory are is `workspace.rs` and the hook crate's
//! `layout`.

pub mod agent_config;
pub mod jsonc;
pub mod ordered_json;
pub mod output;
pub mod summary_table;
pub mod time;
