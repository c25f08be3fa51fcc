import Foundation
import HummingbirdWebSocket
import NIOCore
import NIOWebSocket
import Synchronization
import TonightAPI

/// One open `/v1/live` socket's way out. Producers (request handlers, the vote batcher, job
/// notifiers, other instances through the fan-out) only ``enqueue(_:)``: they never wait for the
/// peer. The socket's own task (``drain(into:)``) writes the queue in order.
///
/// A peer that does not read cannot hold anything up: when its queue holds ``capacity`` messages,
/// or one write has waited ``writeDeadline`` (``LiveHub`` checks every socket every few seconds),
/// its TCP connection is closed. The client reconnects and catches up through the API (chat
/// with `since`, notifications by listing them), as after any lost connection.
final class LiveSocket: Sendable {
    /// What the socket's task does next.
    enum Outgoing: Sendable {
        case text(String)
        /// A close frame with this code and reason, then the end.
        case close(WebSocketErrorCode, String)
    }

    /// The most messages queued for one socket.
    static let capacity = 512
    /// The longest one write may wait for the peer to read.
    static let writeDeadline: Duration = .seconds(10)

    let id = UUID()
    private let channel: any Channel
    private let queue: AsyncStream<Outgoing>
    private let continuation: AsyncStream<Outgoing>.Continuation
    private let queued = Atomic<Int>(0)
    /// When the write in progress began (uptime nanoseconds), 0 between writes.
    private let writing = Atomic<UInt64>(0)

    init(channel: any Channel) {
        self.channel = channel
        (queue, continuation) = AsyncStream<Outgoing>.makeStream()
    }

    /// Queues `outgoing`; false when the queue was full, and the connection is then closed.
    @discardableResult
    func enqueue(_ outgoing: Outgoing) -> Bool {
        if queued.add(1, ordering: .relaxed).newValue > Self.capacity {
            queued.subtract(1, ordering: .relaxed)
            abort()
            return false
        }
        if case .terminated = continuation.yield(outgoing) {
            queued.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Queues a JSON message.
    @discardableResult
    func enqueue(_ message: LiveMessage) -> Bool {
        guard let data = try? JSONEncoder().encode(message) else { return false }
        return enqueue(.text(String(decoding: data, as: UTF8.self)))
    }

    /// Writes the queue until a close is written, a write fails or the queue is finished.
    func drain(into outbound: WebSocketOutboundWriter) async {
        for await outgoing in queue {
            queued.subtract(1, ordering: .relaxed)
            writing.store(max(1, DispatchTime.now().uptimeNanoseconds), ordering: .relaxed)
            defer { writing.store(0, ordering: .relaxed) }
            do {
                switch outgoing {
                case .text(let text):
                    try await outbound.write(.text(text))
                case .close(let code, let reason):
                    try await outbound.close(code, reason: reason)
                    return
                }
            } catch {
                abort()
                return
            }
        }
    }

    /// Whether a write has waited longer than ``writeDeadline`` at `now` (uptime nanoseconds).
    func isStuck(now: UInt64) -> Bool {
        let started = writing.load(ordering: .relaxed)
        return started != 0 && now > started
            && now - started > UInt64(Self.writeDeadline.components.seconds) * 1_000_000_000
    }

    /// Ends the queue: the socket's task stops once it has written what is queued.
    func finish() { continuation.finish() }

    /// Closes the TCP connection at once (a stuck write then fails, and the socket's task ends).
    func abort() {
        continuation.finish()
        channel.close(promise: nil)
    }
}
