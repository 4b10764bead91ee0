package scope_test

import (
	"fmt"

	"github.com/browsergate/browsergate/scope"
)

func ExampleScope_Check() {
	s, err := scope.New(scope.Config{
		AllowedDomains:    []string{"*.example.com", "127.0.0.1"},
		BlockedDomains:    []string{"admin.*"},
		AllowPrivateCIDRs: []string{"127.0.0.1/32"},
	})
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"https://docs.example.com/",
		"https://admin.example.com/",
		"http://127.0.0.1:8080/",
		"http://0x7f.2/",
	} {
		v := s.Check(u)
		fmt.Println(v.Allowed, v.Rule)
	}
	// Output:
	// true allowed_domains "*.example.com"
	// false blocked_domains "admin.*"
	// true allow_private_cidrs "127.0.0.1/32"
	// false address class loopback
}

func ExampleMatch() {
	fmt.Println(scope.Match("*.example.com", "a.b.example.com"))
	fmt.Println(scope.Match("*.example.com", "example.com"))
	fmt.Println(scope.Match("admin.*", "admin.co.uk"))
	// Output:
	// true
	// false
	// true
}
