import Foundation
import NIOCore
import NIOWebSocket
import Synchronization
import TonightAPI

/// One open `/v1/live` socket's way out. Producers (request handlers, the vote batcher, job
/// notifiers, other instances through the fan-out) only ``enqueue(_:)``: they never wait for the
/// peer. What they queue is written on the socket's event loop, in order, with one flush for all
/// that queued meanwhile.
///
/// A peer that does not read cannot hold anything up: when ``capacity`` messages are queued or
/// written but not yet taken by the kernel, or the oldest of them has waited ``writeDeadline``
/// (``LiveHub`` checks every socket every second), its TCP connection is closed. The client
/// reconnects and catches up through the API (chat with `since`, notifications by listing them),
/// as after any lost connection.
final class LiveSocket: Sendable {
    /// What is written next.
    enum Outgoing: Sendable {
        case text(String)
        /// A close frame with this code and reason; nothing is written after it, and the
        /// connection ends when the peer answers with its own (or after ``writeDeadline``).
        case close(WebSocketErrorCode, String)
        /// The answer to the peer's close frame (or to a broken protocol): a close frame with this
        /// code, then the end of the connection (at the latest after ``writeDeadline``).
        case reply(WebSocketErrorCode)
        /// A control frame (`ping` or `pong`) with this payload. Counted like messages, so a peer
        /// that sends pings and reads nothing fills the queue as well.
        case control(WebSocketOpcode, ByteBuffer)

        var isClose: Bool {
            switch self {
            case .text, .control: false
            case .close, .reply: true
            }
        }
    }

    /// The most messages queued for one socket and not yet taken by the kernel.
    static let capacity = 512
    /// The longest a written message may wait for the peer to read, and the longest a close
    /// waits for the peer's close frame.
    static let writeDeadline: Duration = .seconds(10)

    let id = UUID()
    private let channel: any Channel
    /// Messages queued and not yet taken by the kernel.
    private let queued = Atomic<Int>(0)
    /// Since when (uptime nanoseconds) the kernel has taken none of the messages written; 0 when
    /// none is waiting.
    private let waiting = Atomic<UInt64>(0)
    private let outbox = Mutex(Outbox())

    private struct Outbox {
        var items: [Outgoing] = []
        /// A flush is scheduled on the event loop.
        var scheduled = false
        /// A close frame is queued or the connection is closed: nothing more is taken.
        var closed = false
    }

    init(channel: any Channel) {
        self.channel = channel
    }

    /// Queues `outgoing`; false when the socket takes no more (closing, or its queue was full,
    /// and the connection is then closed).
    @discardableResult
    func enqueue(_ outgoing: Outgoing) -> Bool {
        if queued.add(1, ordering: .relaxed).newValue > Self.capacity {
            queued.subtract(1, ordering: .relaxed)
            abort()
            return false
        }
        let schedule: Bool? = outbox.withLock { outbox in
            guard !outbox.closed else { return nil }
            outbox.items.append(outgoing)
            if outgoing.isClose { outbox.closed = true }
            defer { outbox.scheduled = true }
            return !outbox.scheduled
        }
        guard let schedule else {
            queued.subtract(1, ordering: .relaxed)
            return false
        }
        if schedule { channel.eventLoop.execute { self.flush() } }
        return true
    }

    /// Queues a JSON message.
    @discardableResult
    func enqueue(_ message: LiveMessage) -> Bool {
        guard let data = try? JSONEncoder().encode(message) else { return false }
        return enqueue(.text(String(decoding: data, as: UTF8.self)))
    }

    /// Whether a close frame has been queued (the peer's close frame then ends the connection).
    var isClosing: Bool { outbox.withLock { $0.closed } }

    /// Writes what is queued, on the event loop.
    private func flush() {
        let items = outbox.withLock { outbox in
            defer {
                outbox.items = []
                outbox.scheduled = false
            }
            return outbox.items
        }
        for item in items {
            let frame: WebSocketFrame
            switch item {
            case .text(let text):
                frame = WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: text))
            case .close(let code, let reason):
                frame = closeFrame(code, reason: reason)
            case .reply(let code):
                frame = closeFrame(code, reason: "")
            case .control(let opcode, let data):
                frame = WebSocketFrame(fin: true, opcode: opcode, data: data)
            }
            if item.isClose {
                // The peer answers with its close frame (``LiveChannelHandler``), or the write of a
                // reply ends; else the connection is cut off.
                channel.eventLoop.scheduleTask(in: TimeAmount(Self.writeDeadline)) { [channel] in
                    channel.close(promise: nil)
                }
            }
            if waiting.load(ordering: .relaxed) == 0 { waiting.store(Self.now(), ordering: .relaxed) }
            let written = channel.eventLoop.makePromise(of: Void.self)
            written.futureResult.whenComplete { [self] result in
                let left = queued.subtract(1, ordering: .relaxed).newValue
                waiting.store(left > 0 ? Self.now() : 0, ordering: .relaxed)
                if case .failure = result { abort() }
            }
            if case .reply = item { written.futureResult.whenComplete { [channel] _ in channel.close(promise: nil) } }
            channel.write(frame, promise: written)
        }
        channel.flush()
    }

    private func closeFrame(_ code: WebSocketErrorCode, reason: String) -> WebSocketFrame {
        var data = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: data)
    }

    /// Whether a written message has waited longer than ``writeDeadline`` at `now` (uptime
    /// nanoseconds).
    func isStuck(now: UInt64) -> Bool {
        let since = waiting.load(ordering: .relaxed)
        return since != 0 && now > since && now - since > UInt64(TimeAmount(Self.writeDeadline).nanoseconds)
    }

    /// Closes the TCP connection at once; nothing more is queued.
    func abort() {
        outbox.withLock { $0.closed = true }
        channel.close(promise: nil)
    }

    private static func now() -> UInt64 { max(1, DispatchTime.now().uptimeNanoseconds) }
}
