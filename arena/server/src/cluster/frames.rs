//! The peer link's transport (`proto/knobel/peer/v1/peer.proto`): protobuf messages over a
//! TCP connection, each framed by its length (4 bytes, big-endian).
//!
//! Each side reads with a [`FrameReader`] polled by the seat's own task, and writes with a
//! [`FrameSender`] that writes at once from the caller's task while the socket takes the
//! bytes; what it cannot take waits in a bounded queue that the sender's task flushes. That
//! task also sends an `alive` frame every [`HEARTBEAT`], so that the other side can tell a
//! quiet link (a bot thinking) from a stopped arena ([`SILENCE`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use futures_util::StreamExt;
use prost::Message;
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};
use tokio_util::codec::{FramedRead, LengthDelimitedCodec};

/// How often each side of a link says it is alive.
const HEARTBEAT: Duration = Duration::from_secs(1);
/// A link whose other side has sent nothing for this long is broken (its arena stopped or
/// the network between them failed).
pub(super) const SILENCE: Duration = Duration::from_secs(10);
/// Bytes queued towards the other arena; a link that falls this far behind is broken.
const MAX_QUEUED: usize = 4 << 20;
/// How long a closed sender may take to hand over what is still queued.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(3);

/// A connection's two directions, its frames at most `max_frame` bytes.
pub(super) fn split(stream: TcpStream, max_frame: usize) -> (FrameReader, FrameSender) {
    let (read, write) = stream.into_split();
    (FrameReader::new(read, max_frame), FrameSender::new(write))
}

/// One message's frame: its length and its encoding.
pub(super) fn frame(message: &impl Message) -> Bytes {
    let len = message.encoded_len();
    let mut bytes = BytesMut::with_capacity(4 + len);
    put_frame(&mut bytes, message, len);
    bytes.freeze()
}

/// Appends the frame of `message`, whose encoding is `len` bytes long.
fn put_frame(bytes: &mut BytesMut, message: &impl Message, len: usize) {
    bytes.put_u32(len as u32);
    message
        .encode(bytes)
        .expect("a buffer that grows as needed");
}

/// When the other side of a link was last heard from: a link silent for [`SILENCE`] is
/// broken. Its one timer is moved only when it fires, not for every message.
pub(super) struct Silence {
    heard: Instant,
    timer: Pin<Box<Sleep>>,
}

impl Silence {
    pub(super) fn new() -> Silence {
        let heard = Instant::now();
        Silence {
            heard,
            timer: Box::pin(tokio::time::sleep_until(heard + SILENCE)),
        }
    }

    /// The other side was heard from now.
    pub(super) fn heard(&mut self) {
        self.heard = Instant::now();
    }

    /// Ready once nothing has been heard for [`SILENCE`]; registers `cx` until then.
    pub(super) fn poll_silent(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            ready!(self.timer.as_mut().poll(cx));
            let due = self.heard + SILENCE;
            if due <= Instant::now() {
                return Poll::Ready(());
            }
            self.timer.as_mut().reset(due);
        }
    }
}

/// The reading direction of a link.
pub(super) struct FrameReader {
    frames: FramedRead<OwnedReadHalf, LengthDelimitedCodec>,
}

impl FrameReader {
    fn new(read: OwnedReadHalf, max_frame: usize) -> FrameReader {
        let codec = LengthDelimitedCodec::builder()
            .length_field_length(4)
            .max_frame_length(max_frame)
            .new_codec();
        FrameReader {
            frames: FramedRead::new(read, codec),
        }
    }

    /// Raises the largest frame taken from now on.
    pub(super) fn set_max_frame(&mut self, max_frame: usize) {
        self.frames.decoder_mut().set_max_frame_length(max_frame);
    }

    /// The next message; `None` once the link has ended or broken, or sent a frame that is
    /// too long or not a `M`.
    pub(super) fn poll_message<M: Message + Default>(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<M>> {
        self.frames.poll_next_unpin(cx).map(|frame| match frame {
            Some(Ok(bytes)) => M::decode(bytes).ok(),
            _ => None,
        })
    }

    /// The next message (see [`FrameReader::poll_message`]); cancel-safe.
    pub(super) async fn message<M: Message + Default>(&mut self) -> Option<M> {
        std::future::poll_fn(|cx| self.poll_message(cx)).await
    }
}

/// The writing direction of a link. Dropping it closes the link once what is queued is
/// sent (within [`CLOSE_TIMEOUT`]).
pub(super) struct FrameSender {
    shared: Arc<Shared>,
}

struct Shared {
    write: OwnedWriteHalf,
    queue: Mutex<Queue>,
    /// Wakes the sender's task: bytes wait, or the sender is closed.
    wake: Notify,
}

#[derive(Default)]
struct Queue {
    bytes: BytesMut,
    /// A write failed or the queue overflowed: nothing more is sent.
    broken: bool,
    closed: bool,
    /// What is sent every [`HEARTBEAT`], once the link is open.
    alive: Option<Bytes>,
}

/// What writing the queued bytes came to.
enum Flushed {
    All,
    Blocked,
    Broken,
}

impl FrameSender {
    fn new(write: OwnedWriteHalf) -> FrameSender {
        let shared = Arc::new(Shared {
            write,
            queue: Mutex::new(Queue::default()),
            wake: Notify::new(),
        });
        tokio::spawn(send_task(shared.clone()));
        FrameSender { shared }
    }

    /// Sends `alive` every [`HEARTBEAT`] from now on (a link is quiet before it is open: a
    /// caller that has not opened it learns nothing).
    pub(super) fn keep_alive(&self, alive: Bytes) {
        self.shared.queue().alive = Some(alive);
    }

    /// Sends `message`: false if the link is broken (a write failed, or more than
    /// [`MAX_QUEUED`] bytes wait).
    pub(super) fn send(&self, message: &impl Message) -> bool {
        // Framed straight into the queue: no buffer of its own.
        let len = message.encoded_len();
        self.shared
            .send(4 + len, |queue| put_frame(queue, message, len))
    }
}

impl Drop for FrameSender {
    fn drop(&mut self) {
        self.shared.queue().closed = true;
        self.shared.wake.notify_one();
    }
}

impl Shared {
    fn queue(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a frame of `len` bytes that `put` appends, and writes what the socket takes.
    fn send(&self, len: usize, put: impl FnOnce(&mut BytesMut)) -> bool {
        let mut queue = self.queue();
        if queue.broken {
            return false;
        }
        if queue.bytes.len() + len > MAX_QUEUED {
            queue.broken = true;
            return false;
        }
        put(&mut queue.bytes);
        match self.write_queued(&mut queue) {
            Flushed::All => true,
            Flushed::Blocked => {
                self.wake.notify_one();
                true
            }
            Flushed::Broken => false,
        }
    }

    /// Writes what is queued while the socket takes it, without waiting.
    fn write_queued(&self, queue: &mut Queue) -> Flushed {
        while !queue.bytes.is_empty() {
            match self.write.try_write(&queue.bytes) {
                Ok(0) => {
                    queue.broken = true;
                    return Flushed::Broken;
                }
                Ok(n) => queue.bytes.advance(n),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Flushed::Blocked,
                Err(_) => {
                    queue.broken = true;
                    return Flushed::Broken;
                }
            }
        }
        Flushed::All
    }
}

/// The sender's task: flushes what the socket could not take at once, says `alive` every
/// [`HEARTBEAT`] once asked to, and once the sender is closed, sends what is left (within
/// [`CLOSE_TIMEOUT`]) and ends; the last reference to the write half goes with it, which
/// closes the direction (FIN).
async fn send_task(shared: Arc<Shared>) {
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    heartbeat.tick().await;
    let mut close_by: Option<Instant> = None;
    loop {
        let flushed = {
            let mut queue = shared.queue();
            if queue.closed && close_by.is_none() {
                close_by = Some(Instant::now() + CLOSE_TIMEOUT);
            }
            shared.write_queued(&mut queue)
        };
        match flushed {
            Flushed::Broken => return,
            Flushed::All if close_by.is_some() => return,
            Flushed::All => {
                tokio::select! {
                    () = shared.wake.notified() => {}
                    _ = heartbeat.tick() => {
                        let alive = shared.queue().alive.clone();
                        if let Some(alive) = alive {
                            shared.send(alive.len(), |queue| queue.extend_from_slice(&alive));
                        }
                    }
                }
            }
            Flushed::Blocked => {
                // Once closed, the rest is given up at `close_by`.
                let give_up = async {
                    match close_by {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    writable = shared.write.writable() => if writable.is_err() {
                        shared.queue().broken = true;
                        return;
                    },
                    () = shared.wake.notified() => {}
                    () = give_up => return,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use knobel_proto::peer::{self as pp, to_referee};

    use super::*;

    fn from_seat(n: usize) -> pp::ToReferee {
        pp::ToReferee {
            kind: Some(to_referee::Kind::FromSeat(vec![(n % 251) as u8; n])),
        }
    }

    fn alive() -> Bytes {
        frame(&pp::ToReferee {
            kind: Some(to_referee::Kind::Alive(true)),
        })
    }

    /// Two ends of a TCP connection on 127.0.0.1, as frame links.
    async fn linked(max_frame: usize) -> ((FrameReader, FrameSender), (FrameReader, FrameSender)) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let connecting = TcpStream::connect(listener.local_addr().unwrap());
        let (connected, accepted) = tokio::join!(connecting, listener.accept());
        let (ours, theirs) = (
            split(connected.unwrap(), max_frame),
            split(accepted.unwrap().0, max_frame),
        );
        ours.1.keep_alive(alive());
        theirs.1.keep_alive(alive());
        (ours, theirs)
    }

    /// The next message that is not an `alive`.
    async fn next(reader: &mut FrameReader) -> Option<pp::ToReferee> {
        loop {
            match reader.message::<pp::ToReferee>().await {
                Some(pp::ToReferee {
                    kind: Some(to_referee::Kind::Alive(_)),
                }) => continue,
                other => return other,
            }
        }
    }

    #[tokio::test]
    async fn messages_arrive_whole_and_in_order_also_past_what_the_socket_takes_at_once() {
        let ((_, sender), (mut reader, _back)) = linked(1 << 20).await;
        // 3 MiB in all, sent before anything is read: most of it waits in the queue.
        let sizes: Vec<usize> = (0..24).map(|i| [1, 200, 1 << 17][i % 3]).collect();
        for &n in &sizes {
            assert!(
                sender.send(&from_seat(n)),
                "a send of {n} bytes was refused"
            );
        }
        // Closing keeps what is queued: it is sent, then the link ends.
        drop(sender);
        for &n in &sizes {
            assert_eq!(next(&mut reader).await, Some(from_seat(n)));
        }
        assert_eq!(
            next(&mut reader).await,
            None,
            "the link ends after the last message"
        );
    }

    #[tokio::test]
    async fn a_frame_longer_than_the_bound_ends_the_link_and_one_at_the_bound_does_not() {
        // A frame of exactly the bound: 1 + 2 + 997 = 1000 bytes of message.
        let ((_, sender), (mut reader, _back)) = linked(1000).await;
        let at_bound = from_seat(997);
        assert_eq!(prost::Message::encoded_len(&at_bound), 1000);
        assert!(sender.send(&at_bound));
        assert_eq!(next(&mut reader).await, Some(at_bound));
        assert!(sender.send(&from_seat(998)));
        assert_eq!(
            next(&mut reader).await,
            None,
            "a frame over the bound is not read"
        );
    }

    #[tokio::test]
    async fn bytes_that_are_not_the_message_end_the_link() {
        let ((_, sender), (mut reader, _back)) = linked(1 << 20).await;
        // A frame of 3 bytes that are not a ToReferee (field 2 cut short).
        let bytes = [0, 0, 0, 3, 0x12, 0x05, 0x01];
        assert!(
            sender
                .shared
                .send(bytes.len(), |q| q.extend_from_slice(&bytes))
        );
        assert_eq!(reader.message::<pp::ToReferee>().await, None);
    }

    #[tokio::test]
    async fn a_quiet_link_carries_alive_frames() {
        let ((_reader, _sender), (mut other, _back)) = linked(1 << 20).await;
        let heard = tokio::time::timeout(SILENCE, other.message::<pp::ToReferee>()).await;
        assert_eq!(
            heard.expect("an alive frame within the silence bound"),
            Some(pp::ToReferee {
                kind: Some(to_referee::Kind::Alive(true)),
            })
        );
    }

    #[tokio::test]
    async fn a_link_whose_other_side_does_not_read_breaks_once_its_queue_is_full() {
        let ((_, sender), (_unread, _back)) = linked(1 << 20).await;
        let big = from_seat(1 << 19);
        // The socket buffers take some megabytes, the queue at most MAX_QUEUED more.
        let refused = (0..256).position(|_| !sender.send(&big));
        let sent = refused.expect("the sender refuses once the queue is full");
        assert!(
            sent * (1 << 19) >= MAX_QUEUED,
            "refused after {sent} messages"
        );
        assert!(!sender.send(&from_seat(1)), "a broken link stays broken");
    }
}
