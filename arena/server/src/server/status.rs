//! The statuses the server's services share: peers and the failed-login throttle, broken
//! streams, failed store calls.

use std::net::{IpAddr, Ipv4Addr};

use tonic::{Request, Status};
use tracing::warn;

use super::MAX_MESSAGE_BYTES;
use crate::auth;
use crate::net::AuthThrottle;
use crate::store::StoreError;

/// The peer address of a request (from the connection), for the per-address bounds.
pub(super) fn peer_of<T>(request: &Request<T>) -> IpAddr {
    request
        .remote_addr()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |addr| addr.ip())
}

/// The token a request presents in its `authorization: Bearer <token>` metadata, if it
/// presents one (see [`auth::bearer_token`]).
pub(super) fn bearer_token_of<T>(request: &Request<T>) -> Option<&str> {
    let header = request
        .metadata()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    auth::bearer_token(header)
}

/// Refuses a peer whose failed logins are over the throttle, before any lookup.
pub(super) fn check_throttle(throttle: &AuthThrottle, peer: IpAddr) -> Result<(), Status> {
    throttle.check(peer).map_err(|wait| {
        throttle.log_refusal(peer, wait);
        Status::resource_exhausted(throttle.message(peer, wait))
    })
}

/// The status a broken stream ends with, from the status tonic's decoder gave: `None`
/// when the connection is gone (nobody to tell). The codes are the ones the gRPC spec
/// gives: RESOURCE_EXHAUSTED for a message over the size limit, INTERNAL for a request
/// that cannot be parsed (bad framing, bytes that are not a message); the message says
/// which it was, and the limit.
pub(super) fn broken_stream(status: &Status) -> Option<Status> {
    let message = status.message();
    match status.code() {
        // The connection went away (the bot exited, reset the stream).
        tonic::Code::Unknown | tonic::Code::Cancelled => None,
        tonic::Code::OutOfRange | tonic::Code::ResourceExhausted => {
            // tonic: "... found {len} bytes, the limit is: {limit} bytes".
            let found = message
                .split_once("found ")
                .and_then(|(_, rest)| rest.split(' ').next())
                .and_then(|n| n.parse::<u64>().ok());
            Some(Status::resource_exhausted(match found {
                Some(len) => format!(
                    "message of {len} bytes is over the limit of {MAX_MESSAGE_BYTES} bytes: the stream is closed"
                ),
                None => format!(
                    "a message is over the limit of {MAX_MESSAGE_BYTES} bytes ({message}): the stream is closed"
                ),
            }))
        }
        _ if message.contains("protocol error") || message.contains("EOF") => {
            Some(Status::internal(format!(
                "bad gRPC framing ({message}): a frame is a compressed flag of 0 (the arena takes no compression), a 4-byte big-endian length of at most {MAX_MESSAGE_BYTES} and that many bytes of one BotMessage; the stream is closed"
            )))
        }
        _ if message.contains("decode") => Some(Status::internal(format!(
            "a frame that is not a BotMessage ({message}): the stream is closed"
        ))),
        _ => Some(Status::internal(format!(
            "the stream broke ({message}): the stream is closed"
        ))),
    }
}

/// The status for a failed store call: UNAVAILABLE (worth a retry) if the database is
/// unavailable, else "internal error" (the full error goes to the log only).
pub(super) fn internal(error: StoreError) -> Status {
    warn!(error = %error, "store error");
    if error.is_unavailable() {
        Status::unavailable("the arena's database is unavailable: try again later")
    } else {
        Status::internal("internal error")
    }
}
