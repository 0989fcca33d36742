//! The engine's vocabulary, below every other module: what an action is (`action.rs`), a tool
//! call and its analysis (`call.rs`), and the decision with the seam answers given in advance plug
//! into (`answer.rs`), and the question the engine asks its caller about symbolic links
//! (`links.rs`). Types only, with the small methods that define them; no analysis and no
//! decision procedure lives here.

mod action;
mod answer;
mod call;
mod links;

pub use action::*;
pub use answer::*;
pub use call::*;
pub use links::*;
