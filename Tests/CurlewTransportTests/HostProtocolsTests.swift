import Testing
@testable import CurlewTransport

@Suite("Host protocols")
struct HostProtocolsTests {
    private let a = ConnectionAdmission.Host(scheme: "https", authority: "a.test")
    private let b = ConnectionAdmission.Host(scheme: "https", authority: "b.test")

    @Test("an HTTP/1.x answer marks a host; an HTTP/2 or HTTP/3 answer clears it; no answer changes nothing")
    func learns() {
        var protocols = HostProtocols()
        #expect(!protocols.answersOneRequestPerConnection(self.a), "unknown hosts may multiplex")
        protocols.note(.http1_1, from: self.a)
        #expect(protocols.answersOneRequestPerConnection(self.a))
        #expect(!protocols.answersOneRequestPerConnection(self.b), "per host")
        protocols.note(.unknown, from: self.a)
        #expect(protocols.answersOneRequestPerConnection(self.a))
        protocols.note(.http2, from: self.a)
        #expect(!protocols.answersOneRequestPerConnection(self.a), "the server was upgraded")
        protocols.note(.http1_0, from: self.b)
        #expect(protocols.answersOneRequestPerConnection(self.b))
        protocols.note(.http3, from: self.b)
        #expect(!protocols.answersOneRequestPerConnection(self.b))
        #expect(protocols.count == 0)
    }

    @Test("bounded: at the most hosts, a new one makes it forget the others")
    func bounded() {
        var protocols = HostProtocols()
        for index in 0..<HostProtocols.maximumHosts {
            protocols.note(.http1_1, from: ConnectionAdmission.Host(scheme: "https", authority: "h\(index).test"))
        }
        #expect(protocols.count == HostProtocols.maximumHosts)
        protocols.note(.http1_1, from: ConnectionAdmission.Host(scheme: "https", authority: "h0.test"))
        #expect(protocols.count == HostProtocols.maximumHosts, "a known host again adds nothing")
        protocols.note(.http1_1, from: self.a)
        #expect(protocols.count == 1)
        #expect(protocols.answersOneRequestPerConnection(self.a))
    }
}
