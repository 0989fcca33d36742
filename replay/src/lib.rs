//! Prequential replay of the events table under many settings at once.
//!
//! Owns: classifying each event once with the engine, replaying settings and threshold grids
//! per project (decide first, then learn, no look-ahead), the metrics (outcome classes, Wilson
//! bounds, learning curves, the Pareto frontier) and exporting the frozen envelope.
//!
//! Must not: draw anything, or make a decision any other way than through the engine's `decide`,
//! which is what makes a replayed verdict identical to a live one. Filled in by the replay work.
