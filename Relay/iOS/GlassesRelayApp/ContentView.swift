// Type-checked on Linux against a stand-in SwiftUI (AppleSurfaceTests); never compiled against Apple's SDK (see
// ../README.md). One screen, no logic: what RelayAppModel copies from the tested core.
import SwiftUI

struct ContentView: View {
    @Bindable var model: RelayAppModel

    var body: some View {
        Form {
            Section("Glasses") {
                Text(model.glasses)
                Button("Rescan") { model.rescan() }
            }
            Section("Bridge (glasses-bridge --listen)") {
                TextField("Host", text: $model.host)
                TextField("Port", text: $model.port)
                SecureField("Pairing token", text: $model.token)
                Text(model.bridge)
            }
            Section("Relay") {
                Text(model.status)
                Text(verbatim: "Frames to the bridge: \(model.framesSent)")
                Button(model.isRunning ? "Stop" : "Start") {
                    model.isRunning ? model.stop() : model.start()
                }
            }
            Section("Last error, in DAT's words") {
                Text(model.lastError)
            }
        }
    }
}
