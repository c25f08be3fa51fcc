import Foundation
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket
import Testing
import TonightAPI

@testable import TonightServer

/// A `/v1/live` socket that reads its handshake answer and then never reads again, with a small
/// receive buffer: what a stalled phone or a hostile client looks like to the server.
final class StalledSocket: Sendable {
    private let channel: any Channel
    private let received: NIOLockedValueBox<String>

    init(port: Int, token: String) async throws {
        let received = NIOLockedValueBox("")
        self.received = received
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: false)
            .channelOption(.socketOption(.so_rcvbuf), value: 4096)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(TextCollector(received: received))
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
        let request =
            "GET /v1/live?token=\(token) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try await channel.writeAndFlush(ByteBuffer(string: request)).get()
        channel.read()
    }

    /// What arrived in the one read.
    var text: String { received.withLockedValue { $0 } }
    func close() async { try? await channel.close() }
}

/// The decoded messages of an open socket.
final class SocketReader: @unchecked Sendable {
    private var iterator: WebSocketInboundMessageStream.AsyncIterator

    init(_ inbound: WebSocketInboundStream) {
        iterator = inbound.messages(maxSize: 1 << 16).makeAsyncIterator()
    }

    /// The next message (nil when the socket closed).
    func next() async throws -> LiveMessage? {
        guard case .text(let text) = try await iterator.next() else { return nil }
        return try JSONDecoder().decode(LiveMessage.self, from: Data(text.utf8))
    }

    /// The next message of `type`, passing over others (a notification about the same message
    /// may come first or after, depending on when the socket's presence was recorded).
    func next(_ type: String) async throws -> LiveMessage? {
        while let message = try await next() {
            if message.type == type { return message }
        }
        return nil
    }
}

/// Opens `/v1/live` with `token`, waits for `ready`, runs `body`, then closes.
func withSocket(
    port: Int, host: String = "127.0.0.1", token: String,
    _ body: @escaping @Sendable (SocketReader, WebSocketOutboundWriter) async throws -> Void
) async throws {
    try await WebSocketClient.connect(
        url: "ws://\(host):\(port)/v1/live?token=\(token)", logger: Logger(label: "ws")
    ) { inbound, outbound, _ in
        let reader = SocketReader(inbound)
        let ready = try await reader.next()
        #expect(ready?.type == "ready")
        try await body(reader, outbound)
        try await outbound.close(.normalClosure, reason: nil)
    }
}

/// A `/v1/live` client that writes and reads WebSocket frames byte by byte: fragments, control
/// frames and broken frames that a well-behaved client library never sends.
final class RawSocket: @unchecked Sendable {
    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private var buffer = ByteBuffer()

    /// The handshake's status line, and the connection when it upgraded.
    let statusLine: String

    /// - Parameter receiveBuffer: The socket's receive buffer in bytes (small: a slow phone).
    init(port: Int, target: String, receiveBuffer: Int? = nil) async throws {
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let receiveBuffer { bootstrap = bootstrap.channelOption(.socketOption(.so_rcvbuf), value: receiveBuffer) }
        channel =
            try await bootstrap
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        inbound = channel.inbound.makeAsyncIterator()
        let request =
            "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try await channel.outbound.write(ByteBuffer(string: request))
        while buffer.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
            guard var more = try await inbound.next() else { break }
            buffer.writeBuffer(&more)
        }
        let end = buffer.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound
        let head = buffer.readString(length: (end ?? buffer.writerIndex) - buffer.readerIndex) ?? ""
        statusLine = head.components(separatedBy: "\r\n").first ?? ""
    }

    /// Sends one masked frame, `times` times in one write.
    func send(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, times: Int = 1) async throws {
        var frames = ByteBuffer()
        for _ in 0..<times { frames.writeImmutableBuffer(Self.frame(opcode, payload, fin: fin)) }
        try await channel.outbound.write(frames)
    }

    private static func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool) -> ByteBuffer {
        var frame = ByteBuffer()
        frame.writeInteger(UInt8(fin ? 0x80 : 0) | UInt8(webSocketOpcode: opcode))
        if payload.count < 126 {
            frame.writeInteger(UInt8(0x80 | payload.count))
        } else {
            frame.writeInteger(UInt8(0x80 | 126))
            frame.writeInteger(UInt16(payload.count))
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame.writeBytes(mask)
        frame.writeBytes(payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
        return frame
    }

    /// Ends the client's side of the connection (FIN) without a close frame.
    func halfClose() async throws { try await channel.channel.close(mode: .output) }

    /// Sends a text frame.
    func send(text: String, fin: Bool = true, continuation: Bool = false) async throws {
        try await send(continuation ? .continuation : .text, Array(text.utf8), fin: fin)
    }

    /// The next frame the server sent (opcode and payload), nil when the connection ended.
    func next() async throws -> (opcode: WebSocketOpcode, payload: ByteBuffer)? {
        while true {
            if let frame = parse() { return frame }
            guard var more = try await inbound.next() else { return nil }
            buffer.writeBuffer(&more)
        }
    }

    /// The code of the next frame when it is a close frame; nil for any other frame or none.
    func nextClose() async throws -> WebSocketErrorCode? {
        guard let (opcode, payload) = try await next(), opcode == .connectionClose else { return nil }
        var code = payload
        return code.readWebSocketErrorCode()
    }

    /// The next text frame's message, passing over control frames other than close.
    func nextMessage() async throws -> LiveMessage? {
        while let (opcode, payload) = try await next() {
            if opcode == .connectionClose { return nil }
            if opcode == .text { return try JSONDecoder().decode(LiveMessage.self, from: Data(buffer: payload)) }
        }
        return nil
    }

    private func parse() -> (opcode: WebSocketOpcode, payload: ByteBuffer)? {
        var view = buffer
        guard let first = view.readInteger(as: UInt8.self), let second = view.readInteger(as: UInt8.self) else {
            return nil
        }
        var length = Int(second & 0x7F)
        if length == 126 {
            guard let long = view.readInteger(as: UInt16.self) else { return nil }
            length = Int(long)
        } else if length == 127 {
            guard let long = view.readInteger(as: UInt64.self) else { return nil }
            length = Int(long)
        }
        guard let payload = view.readSlice(length: length) else { return nil }
        buffer = view
        return (WebSocketOpcode(encodedWebSocketOpcode: first & 0x0F)!, payload)
    }

    func close() async { try? await channel.channel.close() }

    deinit {
        channel.outbound.finish()
        channel.channel.close(promise: nil)
    }
}
