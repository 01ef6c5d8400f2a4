// Stand-in `SwiftUI` module: exactly the SwiftUI API that the relay app's shell (Relay/iOS/GlassesRelayApp/*.swift)
// uses, each declaration copied from Apple's documentation (https://developer.apple.com/documentation/swiftui/…, the
// page named beside it), reduced to what those files call. Bodies only trap: type-checking on Linux only. Built by
// AppleSurfaceTests. `Observation` needs no stand-in: the Swift toolchain on Linux ships the real module (it is part
// of the Swift project), `@Observable` macro included.
import Foundation
import Observation

// MARK: Views and their builder

/// …/swiftui/view: "@MainActor @preconcurrency protocol View"; "associatedtype Body : View";
/// "@ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }".
@MainActor @preconcurrency public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

/// …/swiftui/never: Never conforms to View (the `Body` of primitive views).
extension Never: View {
    public var body: Never { fatalError("surface only") }
}

/// …/swiftui/viewbuilder: "@resultBuilder struct ViewBuilder".
@resultBuilder public struct ViewBuilder {
    /// …/viewbuilder/buildblock(_:)-2bj1g: "static func buildBlock<each Content>(_ content: repeat each Content) ->
    /// TupleView<(repeat each Content)> where repeat each Content : View".
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> {
        fatalError("surface only")
    }
    /// …/viewbuilder/buildblock(_:): "static func buildBlock<Content>(_ content: Content) -> Content" ("Passes a
    /// single piece of content written as a child view through unmodified.").
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
}

/// …/swiftui/tupleview: "@frozen struct TupleView<T>" (a View).
public struct TupleView<T>: View {
    public var body: Never { fatalError("surface only") }
}

/// …/swiftui/emptyview: "@frozen struct EmptyView" (a View).
public struct EmptyView: View {
    public var body: Never { fatalError("surface only") }
}

/// …/swiftui/text: "@frozen struct Text" (a View).
public struct Text: View {
    /// …/text/init(_:)-9d1g4: "init<S>(_ content: S) where S : StringProtocol" ("Creates a text view that displays
    /// a stored string without localization.").
    public init<S: StringProtocol>(_ content: S) { fatalError("surface only") }
    /// …/text/init(verbatim:): "init(verbatim content: String)" ("Creates a text view that displays a string
    /// literal without localization.").
    public init(verbatim content: String) { fatalError("surface only") }
    public var body: Never { fatalError("surface only") }
}

/// …/swiftui/form: "struct Form<Content> where Content : View"; …/form/init(content:): "init(@ViewBuilder content:
/// () -> Content)".
public struct Form<Content: View>: View {
    public init(@ViewBuilder content: () -> Content) { fatalError("surface only") }
    public var body: Never { fatalError("surface only") }
}

/// …/swiftui/section: "struct Section<Parent, Content, Footer>".
public struct Section<Parent, Content, Footer>: View {
    public var body: Never { fatalError("surface only") }
}

extension Section where Parent == Text, Content: View, Footer == EmptyView {
    /// …/section/init(_:content:)-…: "init<S>(_ title: S, @ViewBuilder content: () -> Content) where S :
    /// StringProtocol". (The SDK also has a `LocalizedStringKey` overload, which a string literal selects there;
    /// both accept the literals the shell passes.)
    public init<S: StringProtocol>(_ title: S, @ViewBuilder content: () -> Content) { fatalError("surface only") }
}

/// …/swiftui/textfield: "struct TextField<Label> where Label : View".
public struct TextField<Label: View>: View {
    public var body: Never { fatalError("surface only") }
}

extension TextField where Label == Text {
    /// …/textfield/init(_:text:)-…: "init<S>(_ title: S, text: Binding<String>) where S : StringProtocol" (the SDK's
    /// `LocalizedStringKey` overload takes literals too, see Section).
    public init<S: StringProtocol>(_ title: S, text: Binding<String>) { fatalError("surface only") }
}

/// …/swiftui/securefield: "struct SecureField<Label> where Label : View".
public struct SecureField<Label: View>: View {
    public var body: Never { fatalError("surface only") }
}

extension SecureField where Label == Text {
    /// …/securefield/init(_:text:)-…: "init<S>(_ title: S, text: Binding<String>) where S : StringProtocol".
    public init<S: StringProtocol>(_ title: S, text: Binding<String>) { fatalError("surface only") }
}

/// …/swiftui/button: "@MainActor @preconcurrency struct Button<Label> where Label : View".
@MainActor @preconcurrency public struct Button<Label: View>: View {
    public var body: Never { fatalError("surface only") }
}

extension Button where Label == Text {
    /// …/button/init(_:action:)-…: "nonisolated init<S>(_ title: S, action: @escaping @MainActor () -> Void) where
    /// S : StringProtocol".
    public nonisolated init<S: StringProtocol>(_ title: S, action: @escaping @MainActor () -> Void) {
        fatalError("surface only")
    }
}

extension View {
    /// …/view/onopenurl(perform:): "nonisolated func onOpenURL(perform action: @escaping (URL) -> ()) -> some View"
    /// ("Registers a handler to invoke in response to a URL that your app receives.").
    public nonisolated func onOpenURL(perform action: @escaping (URL) -> ()) -> some View { self }
}

// MARK: State and bindings

/// …/swiftui/binding: "@frozen @propertyWrapper @dynamicMemberLookup struct Binding<Value>". The shell only passes
/// bindings on (`$model.host`), so only the type is declared.
public struct Binding<Value> {
    private init() { fatalError("surface only") }
}

/// …/swiftui/state: "@frozen @propertyWrapper struct State<Value>"; "init(wrappedValue value: Value)";
/// "var wrappedValue: Value { get nonmutating set }"; "var projectedValue: Binding<Value> { get }".
@propertyWrapper public struct State<Value> {
    public init(wrappedValue value: Value) { fatalError("surface only") }
    public var wrappedValue: Value {
        get { fatalError("surface only") }
        nonmutating set { fatalError("surface only") }
    }
    public var projectedValue: Binding<Value> { fatalError("surface only") }
}

/// …/swiftui/bindable: "@dynamicMemberLookup @propertyWrapper struct Bindable<Value>" ("supports creating bindings
/// to the mutable properties of observable objects").
@dynamicMemberLookup @propertyWrapper public struct Bindable<Value> {
    private var object: Value
    /// …/bindable/init(wrappedvalue:): "init(wrappedValue: Value)" ("Creates a bindable object from an observable
    /// object."), available where Value is a class conforming to Observable (its symbol,
    /// `s:7SwiftUI8BindableVAARlzC11Observation10ObservableRzlE12wrappedValueACyxGx_tcfc`, carries both requirements).
    /// Declared in the type with a `where` clause: a memberwise initializer only passes the wrapped value through an
    /// `init(wrappedValue:)` declared so, and `ContentView(model:)` relies on that as SwiftUI apps do.
    public init(wrappedValue: Value) where Value: AnyObject, Value: Observable { self.object = wrappedValue }
    /// "var wrappedValue: Value".
    public var wrappedValue: Value {
        get { object }
        set { object = newValue }
    }
    /// "var projectedValue: Bindable<Value> { get }".
    public var projectedValue: Bindable<Value> { self }
    /// …/bindable/subscript(dynamicmember:): "subscript<Subject>(dynamicMember keyPath:
    /// ReferenceWritableKeyPath<Value, Subject>) -> Binding<Subject> { get }".
    public subscript<Subject>(dynamicMember keyPath: ReferenceWritableKeyPath<Value, Subject>) -> Binding<Subject> {
        fatalError("surface only")
    }
}

// MARK: Apps and scenes

/// …/swiftui/app: "@MainActor @preconcurrency protocol App"; "associatedtype Body : Scene";
/// "@SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }"; "@MainActor @preconcurrency init()".
@MainActor @preconcurrency public protocol App {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }
    @MainActor @preconcurrency init()
}

extension App {
    /// …/app/main(): "@MainActor @preconcurrency static func main()" ("Initializes and runs the app."; what
    /// `@main` calls).
    @MainActor @preconcurrency public static func main() { fatalError("surface only") }
}

/// …/swiftui/scene: "@MainActor @preconcurrency protocol Scene"; "associatedtype Body : Scene";
/// "@SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }".
@MainActor @preconcurrency public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

extension Never: Scene {}

/// …/swiftui/scenebuilder: "@resultBuilder struct SceneBuilder"; …/scenebuilder/buildblock(_:): "static func
/// buildBlock<Content>(_ content: Content) -> Content where Content : Scene".
@resultBuilder public struct SceneBuilder {
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

/// …/swiftui/windowgroup: "struct WindowGroup<Content> where Content : View" (a Scene); …/windowgroup/
/// init(content:): "nonisolated init(@ViewBuilder content: () -> Content)".
public struct WindowGroup<Content: View>: Scene {
    public nonisolated init(@ViewBuilder content: () -> Content) { fatalError("surface only") }
    public var body: Never { fatalError("surface only") }
}
