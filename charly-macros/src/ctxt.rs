//! Error collection: every mistake in one build, each with the span of its token.

use std::cell::RefCell;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// Collects errors while the input is parsed; [`Ctxt::check`] hands them over once.
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt { errors: RefCell::new(Some(Vec::new())) }
    }

    /// Records an error pointing at `tokens`.
    pub(crate) fn error_spanned_by<T: ToTokens>(&self, tokens: T, message: impl std::fmt::Display) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records a `syn` error as it is.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().as_mut().expect("Ctxt used after check").push(error);
    }

    /// All recorded errors combined into one, or `Ok` when there were none.
    pub(crate) fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.borrow_mut().take().expect("Ctxt checked twice").into_iter();
        let Some(mut combined) = errors.next() else { return Ok(()) };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("charly-macros: forgot to check for errors");
        }
    }
}

/// `tokens` as a compile error.
pub(crate) fn to_compile_errors(error: syn::Error) -> TokenStream {
    error.to_compile_error()
}
