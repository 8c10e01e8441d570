package store

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// checkOwner refuses a home directory whose owner is not this user.
// Never run: Windows is cross-compiled only.
func checkOwner(home string, _ os.FileInfo) error {
	sd, err := windows.GetNamedSecurityInfo(home, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("reading the owner of %s: %w", home, err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("reading the owner of %s: %w", home, err)
	}
	self, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return err
	}
	if !windows.EqualSid(owner, self.User.Sid) {
		return fmt.Errorf("%s belongs to %s, not to this user (%s): choose another PLEXUS_HOME", home, owner, self.User.Sid)
	}
	return nil
}

// makePrivate gives the home directory a protected access list that admits
// only this user, inherited by every file and folder made in it: the
// Windows form of 0700 (file modes mean nothing there). The API socket
// lives in this folder, so it is what keeps other users from connecting.
func makePrivate(home string, _ os.FileInfo) error {
	self, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return err
	}
	// P: not inheriting the parent's entries; OICI: files and folders
	// inherit this one; FA: full access.
	sd, err := windows.SecurityDescriptorFromString("D:P(A;OICI;FA;;;" + self.User.Sid.String() + ")")
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	return windows.SetNamedSecurityInfo(home, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
}
