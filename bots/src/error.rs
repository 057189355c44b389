//! The library's errors.

use thiserror::Error;
use tonic::Code;

/// Why connecting to the arena or playing on it failed.
#[derive(Debug, Error)]
pub enum BotError {
    /// The server address is not a usable URI.
    #[error("invalid server address {address:?}: {reason} (expected e.g. http://127.0.0.1:50051)")]
    InvalidServer {
        /// The address given.
        address: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The token is empty or has characters that cannot go into a header. The token itself
    /// is not repeated.
    #[error(
        "invalid bot token: it must be non-empty visible ASCII (as `knobel bot add` prints it)"
    )]
    InvalidToken,
    /// The configuration cannot work (no games, a bad name, ...).
    #[error("invalid bot configuration: {0}")]
    InvalidConfig(String),
    /// The TCP or HTTP/2 connection could not be made or broke. Retried by [`crate::Bot`].
    #[error("cannot reach the arena: {}", chain(.0))]
    Connect(#[from] tonic::transport::Error),
    /// The arena refused the token (status UNAUTHENTICATED). Not retried: the same token
    /// would be refused again.
    #[error("the arena refused the bot token: {0}")]
    Unauthenticated(String),
    /// The arena ended the call with an error status.
    #[error("the arena ended the call: {code:?}: {message}")]
    Status {
        /// The gRPC status code.
        code: Code,
        /// The arena's message.
        message: String,
    },
    /// The address answered as a plain HTTP server (a web page: the arena's web viewer or
    /// metrics port, or another server), not as gRPC. Not retried.
    #[error("{}", wrong_port_message(*.http_status))]
    NotGrpc {
        /// The HTTP status it answered with.
        http_status: u16,
    },
    /// The program of an [`crate::ExecBot`] could not be started. Not retried.
    #[error(
        "cannot start the program {command:?}: {reason} (give a command that runs, e.g. --exec python3 bot.py)"
    )]
    Program {
        /// The command line.
        command: String,
        /// Why it did not start.
        reason: String,
    },
    /// The bot gave up reconnecting after too many failed attempts in a row.
    #[error("gave up after {attempts} failed attempts in a row; last error: {last}")]
    GaveUp {
        /// Failed attempts in a row.
        attempts: u32,
        /// What went wrong the last time.
        last: String,
    },
}

/// An error and its sources, joined with ": " (tonic's transport error alone says only
/// "transport error").
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// What to tell someone whose address answered plain HTTP with `http_status`.
pub fn wrong_port_message(http_status: u16) -> String {
    format!(
        "this address answered as a web page (HTTP {http_status}), not as the arena's gRPC port: \
         see the 'knobel arena listening on' line"
    )
}

/// The HTTP status of an answer that was not gRPC, if `status` says the call got one: tonic
/// reports a response without `grpc-status` as "grpc-status header missing, mapped from
/// HTTP status code N", and a body that is not gRPC framing (an HTML page) as "... while
/// receiving response with status: N ...".
pub fn non_grpc_answer(status: &tonic::Status) -> Option<u16> {
    let message = status.message();
    let after = [
        "mapped from HTTP status code ",
        "while receiving response with status: ",
    ]
    .into_iter()
    .find_map(|marker| message.split_once(marker).map(|(_, rest)| rest))?;
    let code: String = after.chars().take_while(char::is_ascii_digit).collect();
    code.parse()
        .ok()
        .filter(|&c| c != 200 || message.contains("compression flag"))
}

impl BotError {
    /// The error for a status the arena ended a call with.
    pub fn from_status(status: &tonic::Status) -> BotError {
        if let Some(http_status) = non_grpc_answer(status) {
            return BotError::NotGrpc { http_status };
        }
        match status.code() {
            Code::Unauthenticated => BotError::Unauthenticated(status.message().to_owned()),
            code => BotError::Status {
                code,
                message: status.message().to_owned(),
            },
        }
    }

    /// Whether retrying cannot help: a refused token, a Hello the arena rejects, a server
    /// that does not speak the contract, or a bad configuration. Transport errors and
    /// statuses such as UNAVAILABLE are retried.
    pub fn is_fatal(&self) -> bool {
        match self {
            BotError::InvalidServer { .. }
            | BotError::InvalidToken
            | BotError::InvalidConfig(_)
            | BotError::Unauthenticated(_)
            | BotError::Program { .. }
            | BotError::NotGrpc { .. }
            | BotError::GaveUp { .. } => true,
            BotError::Connect(_) => false,
            BotError::Status { code, .. } => matches!(
                code,
                Code::InvalidArgument
                    | Code::PermissionDenied
                    | Code::FailedPrecondition
                    | Code::Unimplemented
            ),
        }
    }
}

impl From<tonic::Status> for BotError {
    fn from(status: tonic::Status) -> BotError {
        BotError::from_status(&status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_token_is_fatal_and_unavailable_is_not() {
        assert!(BotError::from(tonic::Status::unauthenticated("no")).is_fatal());
        assert!(BotError::from(tonic::Status::invalid_argument("bad hello")).is_fatal());
        assert!(!BotError::from(tonic::Status::unavailable("down")).is_fatal());
        assert!(!BotError::from(tonic::Status::resource_exhausted("streams")).is_fatal());
        assert!(!BotError::from(tonic::Status::internal("h2 error")).is_fatal());
    }

    #[test]
    fn a_web_page_answer_names_the_wrong_port() {
        let web = tonic::Status::internal(
            "protocol error: received message with invalid compression flag: 60 (valid flags \
             are 0 and 1) while receiving response with status: 404 Not Found",
        );
        let metrics = tonic::Status::unimplemented(
            "grpc-status header missing, mapped from HTTP status code 404",
        );
        for status in [web, metrics] {
            let error = BotError::from(status);
            assert!(error.is_fatal());
            assert_eq!(
                error.to_string(),
                "this address answered as a web page (HTTP 404), not as the arena's gRPC port: \
                 see the 'knobel arena listening on' line"
            );
        }
        assert_eq!(non_grpc_answer(&tonic::Status::unavailable("down")), None);
    }
}
