package ident

// State returns pid's start token and whether it is a zombie, as the system
// says now. An error wrapping os.ErrNotExist means the pid is gone; any other
// error means it could not be examined.
func State(pid int) (token string, zombie bool, err error) {
	st, err := readStart(pid)
	if err != nil {
		return "", false, err
	}
	return st.start, st.zombie, nil
}
