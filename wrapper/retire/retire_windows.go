package retire

// Hand has nothing to hand: there is no inotify here.
func Hand() {}

// Main is the process Hand starts: none here.
func Main() int { return 0 }

// Ending has nothing to end here.
func Ending() {}
