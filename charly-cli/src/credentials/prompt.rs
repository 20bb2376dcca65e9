//! Hidden prompts on the controlling terminal (`rpassword`), for a person at a terminal only:
//! a command run as a tool never prompts (DESIGN.md "The command shape"); it asks for an
//! argument or a variable instead.

use std::io::IsTerminal as _;

/// A prompt that could not be answered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// The terminal could not be read.
    #[error("cannot read the answer from the terminal: {0}")]
    Tty(std::io::Error),
    /// An empty answer where a value is needed.
    #[error("no value given (the answer was empty)")]
    Empty,
    /// The two answers of a confirmation differ.
    #[error("the two passwords differ; nothing was changed")]
    Mismatch,
}

/// Whether stdin is a terminal (a person can answer a prompt).
pub fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// Reads a line without echo; refuses an empty answer.
///
/// # Errors
///
/// [`PromptError::Tty`], [`PromptError::Empty`].
pub fn hidden(question: &str) -> Result<String, PromptError> {
    let answer = rpassword::prompt_password(question).map_err(PromptError::Tty)?;
    if answer.is_empty() { Err(PromptError::Empty) } else { Ok(answer) }
}

/// Reads a new password twice without echo.
///
/// # Errors
///
/// As [`hidden`], and [`PromptError::Mismatch`].
pub fn new_password(question: &str) -> Result<String, PromptError> {
    let first = hidden(question)?;
    let second = hidden("Repeat it: ")?;
    if first == second { Ok(first) } else { Err(PromptError::Mismatch) }
}
