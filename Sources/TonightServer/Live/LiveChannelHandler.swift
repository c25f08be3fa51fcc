import Foundation
import Metrics
import NIOCore
import NIOWebSocket
import TonightAPI

/// One `/v1/live` socket, as the last handler of its channel after the WebSocket handshake
/// (``LiveUpgradeChannel``). It speaks the protocol's control frames itself — answers pings
/// (through the socket's bounded queue), pings the client every ``LiveRoutes/pingInterval`` and closes a
/// socket whose pong did not come by the next one, answers a close frame with its own and ends
/// the connection, ends it too when the peer leaves without one (FIN), and sends a close (going
/// away) when the server stops — joins fragments into messages of at most ``maxMessageSize``, and
/// hands each message to ``LiveRoutes`` in order.
///
/// Messages that need no wait (`ping`) are answered on the event loop. Others (`auth`, `typing`)
/// run in a task of their own; until it ends, later messages wait in order and the channel reads
/// no more from the peer, so a client sending faster than its messages are handled is slowed
/// down rather than buffered without bound.
final class LiveChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// The largest message a client may send, its fragments joined.
    static let maxMessageSize = 1 << 16
    /// The open sockets of this process, in `/metrics` as `tonight_live_sockets`.
    static let open = Meter(label: "tonight_live_sockets")

    private enum Inbound {
        case text(String)
        case binary
    }

    private let live: LiveRoutes
    private var principal: Principal?
    private var socket: LiveSocket?
    /// The message being joined from fragments, and whether it is text.
    private var fragments: (data: ByteBuffer, isText: Bool)?
    private var inbox: [Inbound] = []
    /// A message is being handled in a task.
    private var busy = false
    /// The channel asked to read while ``busy``.
    private var readHeld = false
    /// A close was asked for, by either side: later messages are not handled.
    private var ended = false
    private var inactive = false
    private var awaitingPong = false
    private var pings: RepeatedTask?
    private var authDeadline: Scheduled<Void>?
    /// Registering the socket with the hub and presence, when the token came in the query.
    private var opening: Task<Void, Never>?

    /// - Parameters:
    ///   - live: What handles the socket's messages.
    ///   - principal: The caller, when the handshake carried a valid token.
    init(live: LiveRoutes, principal: Principal?) {
        self.live = live
        self.principal = principal
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let socket = LiveSocket(channel: context.channel)
        self.socket = socket
        Self.open.increment()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        if let principal {
            // `ready` first (queued as the socket is registered), before the answer to any
            // message: none is handled until then.
            busy = true
            opening = Task { [live] in
                await live.opened(principal, socket: socket)
                loopBound.eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.handled(.next, context: context)
                }
            }
        } else {
            authDeadline = context.eventLoop.assumeIsolated().scheduleTask(
                in: TimeAmount(live.authTimeout)
            ) {
                [self] in
                if principal == nil { socket.enqueue(.close(.policyViolation, "authenticate first")) }
            }
        }
        let interval = TimeAmount(live.pingInterval)
        pings = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            let (handler, context) = loopBound.value
            handler.ping(context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        // No extension is negotiated, so no reserved bit may be set.
        guard !frame.rsv1, !frame.rsv2, !frame.rsv3 else { return fail(.protocolError, context) }
        switch frame.opcode {
        case .ping:
            guard frame.fin else { return fail(.protocolError, context) }
            socket?.enqueue(.control(.pong, frame.unmaskedData))
        case .pong:
            awaitingPong = false
        case .connectionClose:
            ended = true
            // A close frame has no body, or a two-byte code and a reason.
            let code: WebSocketErrorCode = frame.length == 1 ? .protocolError : .normalClosure
            // We answer the peer's close and end the connection; or the close we sent is
            // answered, and the connection ends once what is queued before it was written.
            if socket?.enqueue(.reply(code)) != true {
                let channel = context.channel
                context.eventLoop.execute { channel.close(promise: nil) }
            }
        case .text, .binary:
            guard fragments == nil else { return fail(.protocolError, context) }
            fragments = (frame.unmaskedData, frame.opcode == .text)
            if frame.fin { received(context) }
        case .continuation:
            guard var joined = fragments else { return fail(.protocolError, context) }
            var more = frame.unmaskedData
            guard joined.data.readableBytes + more.readableBytes <= Self.maxMessageSize else {
                return fail(.messageTooLarge, context)
            }
            fragments = nil
            joined.data.writeBuffer(&more)
            fragments = joined
            if frame.fin { received(context) }
        default:
            fail(.protocolError, context)
        }
    }

    func read(context: ChannelHandlerContext) {
        if busy {
            readHeld = true
        } else {
            context.read()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case ChannelEvent.inputClosed:
            // The peer sent FIN without a close frame: a killed app, a dropped network.
            context.close(promise: nil)
        case is ChannelShouldQuiesceEvent:
            // The server is stopping (it does not wait for live sockets: the presence service
            // releases this instance's leases as it stops).
            socket?.enqueue(.close(.goingAway, "server stopping"))
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        inactive = true
        Self.open.decrement()
        stopTimers()
        socket?.abort()
        if let principal, let socket { closed(principal, socket: socket) }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { stopTimers() }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: Messages

    private func received(_ context: ChannelHandlerContext) {
        guard let message = fragments else { return }
        fragments = nil
        // Once a close is under way, what the peer still sends is read and dropped.
        guard !ended, socket?.isClosing == false else {
            inbox = []
            return
        }
        inbox.append(message.isText ? .text(String(buffer: message.data)) : .binary)
        handleNext(context)
    }

    /// Handles the waiting messages in order until one needs a task.
    private func handleNext(_ context: ChannelHandlerContext) {
        guard let socket else { return }
        while !busy, !ended, !socket.isClosing, !inbox.isEmpty {
            guard case .text(let text) = inbox.removeFirst(),
                let message = try? JSONDecoder().decode(LiveMessage.self, from: Data(text.utf8))
            else {
                socket.enqueue(LiveMessage(type: LiveMessage.Kind.error, message: "Send JSON text messages."))
                continue
            }
            if message.type == LiveMessage.Kind.ping {
                socket.enqueue(LiveMessage(type: LiveMessage.Kind.pong))
                continue
            }
            busy = true
            let (live, principal) = (live, principal)
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            Task {
                let outcome = await live.handle(message, principal: principal, socket: socket)
                loopBound.eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.handled(outcome, context: context)
                }
            }
        }
        if !busy, readHeld {
            readHeld = false
            context.read()
        }
    }

    private func handled(_ outcome: LiveRoutes.Outcome, context: ChannelHandlerContext) {
        busy = false
        switch outcome {
        case .next:
            break
        case .authenticated(let verified):
            principal = verified
            authDeadline?.cancel()
            // Closed while the token was checked: the socket was registered all the same.
            if inactive, let socket { closed(verified, socket: socket) }
        case .end:
            ended = true
        }
        handleNext(context)
    }

    private func closed(_ principal: Principal, socket: LiveSocket) {
        let (live, opening) = (live, opening)
        Task {
            await opening?.value
            await live.closed(principal, socket: socket)
        }
    }

    // MARK: Control

    private func ping(_ context: ChannelHandlerContext) {
        guard let socket, !socket.isClosing else { return }
        guard !awaitingPong else {
            socket.enqueue(.close(.goingAway, "ping timeout"))
            return
        }
        awaitingPong = true
        var data = context.channel.allocator.buffer(capacity: 8)
        data.writeInteger(UInt64.random(in: 0...UInt64.max))
        socket.enqueue(.control(.ping, data))
    }

    /// Ends a socket that broke the protocol: a close frame with `code`, then the connection.
    private func fail(_ code: WebSocketErrorCode, _ context: ChannelHandlerContext) {
        ended = true
        fragments = nil
        if socket?.enqueue(.reply(code)) != true { context.close(promise: nil) }
    }

    private func stopTimers() {
        pings?.cancel()
        pings = nil
        authDeadline?.cancel()
        authDeadline = nil
    }
}
