package harness

// geminiSystemSettings is getSystemSettingsPath's default.
const geminiSystemSettings = `C:\ProgramData\gemini-cli\settings.json`

// geminiRootOnly: gemini 0.61 checks a system settings file's ACLs on
// Windows, which padrun does not read: it takes the file as refused.
func geminiRootOnly(string) bool { return false }
