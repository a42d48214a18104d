require ["fileinto", "mailbox"];
# postern: begin v1 (rules made in postern's filter screen)
# postern: rule {"name":"Newsletters","on":true,"all":true,"when":[{"field":"from","op":"contains","value":"@newsletter.example.com"}],"then":[{"act":"move","folder":"Newsletters"}]}
if address :all :contains "from" "@newsletter.example.com" {
  fileinto :create "Newsletters";
}
# postern: end
