//! NUL-framed DXP messages over any byte stream, with a bound on every message read.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::message::{Message, MessageError, MAX_MESSAGE};

/// Why a DXP exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum DxpError {
    /// Reading or writing the stream failed.
    #[error("DXP connection failed: {0}")]
    Io(#[from] io::Error),
    /// The peer closed the connection (`partial` bytes of an unfinished message were pending).
    #[error("the peer closed the connection{}", if *partial > 0 { format!(" in the middle of a message ({partial} bytes)") } else { String::new() })]
    Closed {
        /// Bytes of an unfinished message.
        partial: usize,
    },
    /// Nothing arrived within the read time-out.
    #[error("the peer sent nothing within the time-out")]
    Timeout,
    /// More than 127 bytes without a NUL: not DXP, or a broken peer.
    #[error("the peer sent more than {MAX_MESSAGE} bytes without the NUL that ends a DXP message")]
    Unterminated,
    /// A complete message that is not valid DXP.
    #[error("{0}")]
    Message(#[from] MessageError),
    /// An address that cannot be used.
    #[error("bad address `{addr}`: {reason}")]
    Address {
        /// The address as given.
        addr: String,
        /// What is wrong.
        reason: String,
    },
}

/// A stream whose reads can time out; implemented for [`TcpStream`]. Streams without
/// time-outs can implement it with the default (which ignores the request).
pub trait Transport: Read + Write {
    /// Makes reads give up after `timeout` (`None`: wait forever).
    fn set_read_timeout(&mut self, _timeout: Option<Duration>) -> io::Result<()> {
        Ok(())
    }
}

impl Transport for TcpStream {
    fn set_read_timeout(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }
}

/// A DXP connection: sends and receives whole messages over `S`.
///
/// Reads are bounded: at most [`MAX_MESSAGE`] bytes are kept while looking for the NUL, so a
/// peer that never sends one costs a fixed amount of memory and gets [`DxpError::Unterminated`].
#[derive(Debug)]
pub struct Connection<S> {
    stream: S,
    pending: Vec<u8>,
}

impl<S: Read + Write> Connection<S> {
    /// Wraps a connected stream.
    pub fn new(stream: S) -> Connection<S> {
        Connection {
            stream,
            pending: Vec::new(),
        }
    }

    /// The stream.
    pub fn get_ref(&self) -> &S {
        &self.stream
    }

    /// The stream, mutably (for example to set a time-out).
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.stream
    }

    /// Sends one message.
    pub fn send(&mut self, msg: &Message) -> Result<(), DxpError> {
        self.send_raw(&msg.encode())
    }

    /// Sends `bytes` followed by a NUL, unchecked (for tests that play a broken peer).
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), DxpError> {
        let mut frame = Vec::with_capacity(bytes.len() + 1);
        frame.extend_from_slice(bytes);
        frame.push(0);
        self.stream.write_all(&frame)?;
        self.stream.flush()?;
        Ok(())
    }

    /// Receives the bytes of one message (without the NUL), not yet parsed.
    pub fn recv_frame(&mut self) -> Result<Vec<u8>, DxpError> {
        loop {
            if let Some(i) = self.pending.iter().position(|&b| b == 0) {
                if i > MAX_MESSAGE {
                    return Err(DxpError::Unterminated);
                }
                let mut frame: Vec<u8> = self.pending.drain(..=i).collect();
                frame.pop();
                return Ok(frame);
            }
            if self.pending.len() > MAX_MESSAGE {
                return Err(DxpError::Unterminated);
            }
            let mut chunk = [0u8; 256];
            let n = match self.stream.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(DxpError::Timeout)
                }
                Err(e) => return Err(DxpError::Io(e)),
            };
            if n == 0 {
                return Err(DxpError::Closed {
                    partial: self.pending.len(),
                });
            }
            self.pending.extend_from_slice(&chunk[..n]);
        }
    }

    /// Receives and parses one message.
    pub fn recv(&mut self) -> Result<Message, DxpError> {
        let frame = self.recv_frame()?;
        Ok(Message::parse(&frame)?)
    }
}

impl<S: Transport> Connection<S> {
    /// Makes [`Connection::recv`] give up with [`DxpError::Timeout`] after `timeout`.
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> Result<(), DxpError> {
        // A zero time-out means "block forever" to the OS; keep it a short wait instead.
        let t = timeout.map(|t| t.max(Duration::from_millis(1)));
        self.stream.set_read_timeout(t)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that reads from a fixed buffer and records what is written.
    struct Script {
        input: io::Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Script {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            // Hand out at most 5 bytes at a time, to exercise reassembly.
            let n = buf.len().min(5);
            self.input.read(&mut buf[..n])
        }
    }

    impl Write for Script {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn conn(input: &[u8]) -> Connection<Script> {
        Connection::new(Script {
            input: io::Cursor::new(input.to_vec()),
            output: Vec::new(),
        })
    }

    #[test]
    fn frames_and_bounds() {
        let mut c = conn(b"E20\0CHello there\0K1\0M00");
        assert_eq!(c.recv_frame().unwrap(), b"E20");
        assert_eq!(c.recv().unwrap(), Message::Chat("Hello there".into()));
        assert!(matches!(c.recv().unwrap(), Message::BackAccept(_)));
        assert!(matches!(c.recv(), Err(DxpError::Closed { partial: 3 })));
        let mut c = conn(&[b'C'; 300]);
        assert!(matches!(c.recv(), Err(DxpError::Unterminated)));
        // 127 characters then NUL is the longest message; 128 is one too many.
        let mut long = vec![b'C'; 127];
        long.push(0);
        assert_eq!(conn(&long).recv().unwrap(), Message::Chat("C".repeat(126)));
        let mut longer = vec![b'C'; 128];
        longer.push(0);
        assert!(matches!(conn(&longer).recv(), Err(DxpError::Unterminated)));
        assert!(matches!(
            conn(b"\0").recv(),
            Err(DxpError::Message(MessageError::Empty))
        ));
        let mut c = conn(b"");
        c.send(&Message::Chat("hi".into())).unwrap();
        assert_eq!(c.get_ref().output, b"Chi\0");
    }
}
