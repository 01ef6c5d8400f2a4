/// A type-erased async sequence, as DAT's selectors return it.
public struct AnyAsyncSequence<Element: Sendable>: AsyncSequence, Sendable {
    /// The iterator of an ``AnyAsyncSequence``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.AsyncIterator

        /// The next element, or nil when the sequence ended.
        public mutating func next() async -> Element? { await base.next() }
    }

    private let stream: AsyncStream<Element>

    /// Wraps an AsyncStream.
    public init(_ stream: AsyncStream<Element>) {
        self.stream = stream
    }

    /// Makes an iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: stream.makeAsyncIterator()) }
}
